"""The paper's public code permuted card features by g but hint-colour features by g^-1.

The mixed map is not a homomorphism, so the "symmetrized" agents built on it are not
equivariant. eqc's checks must make that bug impossible to miss.
"""

import torch
from torch import nn

from eqc.domains.hanabi import colour_symmetry
from eqc.groups import PermutationRepresentation, dihedral, inverse_permutations
from eqc.symmetrize import Symmetrizer
from eqc.verification import equivariance_error


def mixed_convention(sym) -> PermutationRepresentation:
    """rho_obs with every hint-colour block moved by g^-1 instead of g."""
    layout = sym.observation_layout
    hinted = torch.zeros(layout.dim, dtype=torch.bool)
    for block in layout:
        if block.name.endswith("_colour_hinted") or block.name == "last_action_colour":
            hinted[layout.slice(block.name)] = True
    correct = sym.observation_rep

    def coordinate_map(perms: torch.Tensor) -> torch.Tensor:
        return torch.where(hinted, correct.coordinate_map(inverse_permutations(perms)), correct.coordinate_map(perms))

    return PermutationRepresentation(sym.group, layout.dim, coordinate_map, name="mixed")


def test_mixed_convention_is_caught_for_every_non_identity_element():
    sym = colour_symmetry(dihedral(5))
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(658, 64), nn.ReLU(), nn.Linear(64, 20)).double()
    x = torch.bernoulli(torch.full((16, 658), 0.3, dtype=torch.float64))

    good = equivariance_error(Symmetrizer(net, sym.observation_rep, sym.action_rep), sym.observation_rep, sym.action_rep, x)
    assert good.ok and good.max_error < 1e-12

    bugged = Symmetrizer(net, mixed_convention(sym), sym.action_rep)
    report = equivariance_error(bugged, sym.observation_rep, sym.action_rep, x)
    errors = report.outputs[0].per_element
    assert not report.ok
    assert errors[0] == 0.0  # the identity cannot reveal it
    assert (errors[1:] > 1e-3).all()  # every other element of D10 does
