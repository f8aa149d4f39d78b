"""eqc: equivariant policies for zero-shot coordination in Dec-POMDPs."""
