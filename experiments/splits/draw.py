"""The seeded random draw behind every split assignment. Pure Python and numpy: no ORM.

Algorithm (documented because an auditor must be able to repeat a draw by hand):

1. The candidates are sorted by `external_id`, so the draw does not depend on the order in which
   documents were imported or on their database keys.
2. `rng = numpy.random.default_rng(seed)` (PCG64).
3. Without stratification: `order = rng.permutation(len(candidates))`; the first `n` positions of that
   order are drawn.
4. With stratification by a metadata key: candidates are grouped by `str(value)` of that key (a
   document without the key is in the stratum `""`); strata are sorted by that string. Each stratum gets
   `floor(n * size / total)` documents, and the documents left over go one each to the strata with the
   largest fractional remainders (ties: stratum order): proportional allocation by largest remainder.
   Then, stratum by stratum in sorted order with the same `rng`, `rng.permutation(size)` draws its share.

Same seed and same candidates give the same draw, whatever else is in the database.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Candidate:
    """A document that may be drawn: its key, external id, and the value it is stratified by."""

    pk: int
    external_id: str
    stratum: str = ""


def stratum_of(metadata: Mapping | None, key: str | None) -> str:
    """The stratum of a document: `str(metadata[key])`, or `""` when there is no key or no value."""
    if not key or not metadata or metadata.get(key) is None:
        return ""
    return str(metadata[key])


def proportional_allocation(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """Split `n` over strata in proportion to their sizes (largest remainder; ties by stratum order)."""
    total = sum(sizes.values())
    if total == 0:
        return dict.fromkeys(sizes, 0)
    exact = {name: n * size / total for name, size in sizes.items()}
    shares = {name: math.floor(value) for name, value in exact.items()}
    left_over = n - sum(shares.values())
    by_remainder = sorted(sorted(sizes), key=lambda name: exact[name] - shares[name], reverse=True)
    for name in by_remainder[:left_over]:
        shares[name] += 1
    return shares


def draw(candidates: Sequence[Candidate], *, n: int, seed: int, stratified: bool = False) -> list[Candidate]:
    """Draw `n` of `candidates` with `seed` (see the module docstring); the result is sorted by external id."""
    if n < 0 or n > len(candidates):
        raise ValueError(f"cannot draw {n} of {len(candidates)} documents")
    ordered = sorted(candidates, key=lambda candidate: candidate.external_id)
    rng = np.random.default_rng(seed)
    if not stratified:
        positions = rng.permutation(len(ordered))[:n]
        chosen = [ordered[position] for position in positions]
    else:
        strata: dict[str, list[Candidate]] = {}
        for candidate in ordered:
            strata.setdefault(candidate.stratum, []).append(candidate)
        shares = proportional_allocation({name: len(members) for name, members in strata.items()}, n)
        chosen = []
        for name in sorted(strata):
            members = strata[name]
            positions = rng.permutation(len(members))[: shares[name]]
            chosen.extend(members[position] for position in positions)
    return sorted(chosen, key=lambda candidate: candidate.external_id)
