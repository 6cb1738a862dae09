"""The processes of a benchmark: a process and every process below it, read from /proc."""

from __future__ import annotations


def descendants(pid: str) -> list[str]:
    """`pid` and every process below it (a pool's workers are the children of its fork server)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/task/{current}/children", encoding="ascii") as children:
                below = children.read().split()
        except OSError:
            if current == pid:
                return []
            continue
        found.append(current)
        pending.extend(below)
    return found
