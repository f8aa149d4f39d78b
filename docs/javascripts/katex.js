// Renders the math that pymdownx.arithmatex (generic mode) leaves as \( ... \) and \[ ... \]
// in elements of class "arithmatex", with the KaTeX vendored in javascripts/katex/ (no network).
function renderMath() {
  for (const element of document.querySelectorAll(".arithmatex")) {
    renderMathInElement(element, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  }
}

if (typeof document$ !== "undefined") {
  document$.subscribe(renderMath); // Material's instant navigation re-renders each page it loads
} else {
  document.addEventListener("DOMContentLoaded", renderMath);
}
