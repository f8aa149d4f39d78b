"""The typed reports beside the tables: every committed report reads back, writes byte for byte as it was and renders
its committed Markdown byte for byte; a malformed or foreign file is refused naming the key; the conventions report's
gap shares are computed again from the tables in its directory without playing a game."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from eqc.cli import main
from eqc.domains.hanabi.reproduce.codes import render_codes
from eqc.domains.hanabi.reproduce.conventions import refresh_conventions, render_conventions
from eqc.domains.hanabi.reproduce.entropy import render_entropy
from eqc.domains.hanabi.reproduce.record import read_table
from eqc.domains.hanabi.reproduce.reports import CodeReport, ConventionReport, EntropyReport, read_codes, read_conventions, read_entropy
from eqc.domains.hanabi.reproduce.schema import Record, RecordError
from eqc.domains.hanabi.reproduce.specs import ReproduceError
from eqc.domains.hanabi.xp.alignment import alignable_share

ROOT = Path(__file__).resolve().parents[4]
#: Each report: how it is read and rendered.
KINDS: dict[str, tuple[Callable[[Path], Record], Callable[..., str]]] = {
    "conventions": (read_conventions, render_conventions), "entropy": (read_entropy, render_entropy), "codes": (read_codes, render_codes)}
REPORTS = sorted(p for kind in KINDS for p in ROOT.glob(f"results/*/{kind}.json"))


def test_the_committed_reports_are_found() -> None:
    assert {f"{p.parent.name}/{p.stem}" for p in REPORTS} == {
        "colour/conventions", "induced/conventions", "touched/conventions", "colour/entropy", "entropy/entropy", "ers/codes"}


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_committed_report_round_trips_and_renders_its_markdown_byte_for_byte(path: Path) -> None:
    """The committed ``.md`` is what its ``.json`` renders: a report cannot drift from its data."""
    read, render = KINDS[path.stem]
    record = read(path)
    assert json.dumps(record.to_json(), indent=2, allow_nan=False) + "\n" == path.read_text()
    assert render(record) == path.with_suffix(".md").read_text()


def _refused(kind: type[Record], path: str, edit: Callable[[dict], object]) -> str:
    data = json.loads((ROOT / "results" / path).read_text())
    edit(data)
    with pytest.raises(RecordError) as info:
        kind.from_json(data)
    return str(info.value)


@pytest.mark.parametrize(("kind", "path", "edit", "message"), [
    (ConventionReport, "colour/conventions.json", lambda d: d["agents"]["sp"]["slots_012"].pop("pi"),
     "['agents']['sp']['slots_012']['pi']: missing"),
    (ConventionReport, "colour/conventions.json", lambda d: d["alignment"]["sp"]["element"][0].__setitem__(1, 0.5),
     "['alignment']['sp']['element'][0][1]: expected an integer, got float 0.5"),
    (ConventionReport, "colour/conventions.json", lambda d: d["gap_share"]["cells"].update(OP="high"),
     "['gap_share']['cells']['OP']: expected a number (null for NaN), got str 'high'"),
    (ConventionReport, "induced/conventions.json", lambda d: d["shared_factor"]["sp x op"].update(extra=1),
     "['shared_factor']['sp x op']['extra']: unexpected key"),
    (EntropyReport, "entropy/entropy.json", lambda d: d["pools"]["ippo_c001"]["greedy_xp"].pop("sem"),
     "['pools']['ippo_c001']['greedy_xp']['sem']: missing"),
    (EntropyReport, "entropy/entropy.json", lambda d: d["agents"][3].update(states="many"),
     "['agents'][3]['states']: expected an integer, got str 'many'"),
    (EntropyReport, "colour/entropy.json", lambda d: d["sampled_tests"]["ippo_c005 > ippo_c001"].update(pools=["a"]),
     "['sampled_tests']['ippo_c005 > ippo_c001']['pools']: expected a list of 2, got 1 items"),
    (CodeReport, "ers/codes.json", lambda d: d["cells"]["OP"]["codes"][2].pop("slot_code"),
     "['cells']['OP']['codes'][2]['slot_code']: missing"),
    (CodeReport, "ers/codes.json", lambda d: d["cells"]["OP"]["xp_by_slot_code"]["same"].update(pairs=None),
     "['cells']['OP']['xp_by_slot_code']['same']['pairs']: expected an integer, got NoneType None"),
    (CodeReport, "ers/codes.json", lambda d: d["tests"]["G-OP C3 vs OP"].update(exact="yes"),
     "['tests']['G-OP C3 vs OP']['exact']: expected true or false, got str 'yes'"),
])
def test_a_malformed_report_is_refused_naming_the_key(kind: type[Record], path: str, edit: Callable[[dict], object],
                                                       message: str) -> None:
    assert message in _refused(kind, path, edit)


def test_a_foreign_file_is_refused_naming_the_file() -> None:
    with pytest.raises(RecordError, match=r"entropy.json is not a conventions report: \['games'\]: missing"):
        read_conventions(ROOT / "results" / "colour" / "entropy.json")
    with pytest.raises(RecordError, match=r"table1.json is not a code report: \['games'\]: missing"):
        read_codes(ROOT / "results" / "ers" / "table1.json")


@pytest.fixture
def colour(tmp_path: Path) -> Path:
    """A copy of ``results/colour``'s conventions report and tables."""
    for name in ("conventions.json", "conventions.md", "table1.json", "table2.json"):
        shutil.copy(ROOT / "results" / "colour" / name, tmp_path / name)
    return tmp_path


def test_refreshing_recomputes_the_gap_shares_from_the_tables_and_keeps_every_measured_section(colour: Path) -> None:
    stale = json.loads((colour / "conventions.json").read_text())  # as written before table2 gained its pooled cells
    for label in ("SP streams 0+1", "SP streams 0+1 S3-symmetrized"):
        del stale["gap_share"]["cells"][label]
    del stale["gap_share"]["refreshed_by"]
    (colour / "conventions.json").write_text(json.dumps(stale))
    before = read_conventions(colour / "conventions.json")
    report = refresh_conventions("colour", colour)
    cells = {label: cell.xp_mean for table in ("table1", "table2") for label, cell in read_table(colour / f"{table}.json").cells.items()}
    gap = report.gap_share
    assert gap is not None and before.gap_share is not None and (gap.plain_xp, gap.aligned_xp) == (before.gap_share.plain_xp,
                                                                                                    before.gap_share.aligned_xp)
    assert gap.cells == {label: alignable_share(xp, gap.plain_xp, gap.aligned_xp) for label, xp in cells.items()}
    assert "SP streams 0+1" in gap.cells and "SP streams 0+1" not in before.gap_share.cells  # the staleness it repairs
    assert before.gap_share.refreshed_by is None and gap.refreshed_by == "eqc.domains.hanabi.reproduce.refresh_conventions(...)"
    assert "computed again from this folder's tables by `eqc.domains.hanabi.reproduce.refresh_conventions(...)`" in \
        (colour / "conventions.md").read_text()  # the page says so: its measurements' command did not compute these shares
    for section in ("scale", "games", "agents", "alignment", "ceiling", "shared_factor", "command"):
        assert json.dumps(report.to_json()[section]) == json.dumps(before.to_json()[section]), section
    assert read_conventions(colour / "conventions.json").to_json() == report.to_json()
    assert (colour / "conventions.md").read_text() == render_conventions(report)

    table = json.loads((colour / "table1.json").read_text())  # a cell's XP moved: its share follows, nothing else
    table["cells"]["C3-equivariant"]["xp_mean"] = gap.aligned_xp
    (colour / "table1.json").write_text(json.dumps(table))
    tampered = refresh_conventions("colour", colour).gap_share
    assert tampered is not None and tampered.cells["C3-equivariant"] == 1.0
    assert {**tampered.cells, "C3-equivariant": 0} == {**gap.cells, "C3-equivariant": 0}


def _unchanged(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.parametrize(("call", "argument", "message"), [
    (lambda out: refresh_conventions("induced", out), "reuse", "is the report at scale 'colour' with 400 games per measurement, "
     "not at 'induced' with 400"),
    (lambda out: refresh_conventions("colour", out, games=8), "reuse", "not at 'colour' with 8"),
    (lambda out: refresh_conventions("cpu", out), "scale", "not 'cpu'"),
    (lambda out: refresh_conventions("colour", out / "empty"), "reuse", "no conventions report to refresh"),
])
def test_refreshing_refuses_a_missing_or_foreign_report_before_writing(colour: Path, call: Callable[[Path], object], argument: str,
                                                                       message: str) -> None:
    before = _unchanged(colour)
    with pytest.raises(ReproduceError, match=message) as info:
        call(colour)
    assert info.value.argument == argument and _unchanged(colour) == before


def test_refreshing_refuses_a_file_that_is_not_its_record(colour: Path) -> None:
    report = json.loads((colour / "conventions.json").read_text())
    report["ceiling"]["sp"]["slots_012"].pop("self_play")
    (colour / "conventions.json").write_text(json.dumps(report))
    with pytest.raises(ReproduceError, match=r"not a conventions report: \['ceiling'\]\['sp'\]\['slots_012'\]\['self_play'\]: missing"):
        refresh_conventions("colour", colour)
    (colour / "conventions.json").write_text(json.dumps(json.loads((ROOT / "results/colour/conventions.json").read_text())))
    (colour / "table2.json").write_text("[]")
    before = _unchanged(colour)
    with pytest.raises(ReproduceError, match=r"table2\.json is not a table record") as info:
        refresh_conventions("colour", colour)
    assert info.value.argument == "out" and _unchanged(colour) == before


def test_the_cli_refreshes_with_reuse_and_refuses_what_does_not_apply(colour: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["hanabi", "reproduce", "conventions", "--scale", "colour", "--out", str(colour), "--reuse"]
    assert main(argv) == 0 and "| SP streams 0+1 |" in (printed := capsys.readouterr().out)
    assert f"by `eqc {' '.join(argv)}` (nothing played)" in printed
    for extra, error in ((["--agents", str(colour)], "argument --agents: does not apply with --reuse"),
                         (["--retrain"], "argument --retrain: does not apply to conventions"),
                         (["--out", str(colour / "missing")], "argument --reuse: no conventions report to refresh")):
        with pytest.raises(SystemExit) as info:
            main([*argv, *extra])
        assert info.value.code == 2 and error in capsys.readouterr().err
    assert not (colour / "missing").exists()
