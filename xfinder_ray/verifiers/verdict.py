"""What a verifier's output says, parsed: one small value shared by every verifier family."""

from __future__ import annotations

from dataclasses import dataclass

CORRECT, INCORRECT, INVALID = "correct", "incorrect", "invalid"
# `detail` of an output that holds no verdict: the verifier failed, not the judged response.
UNPARSED = "unparsed"


@dataclass(frozen=True)
class Verdict:
    verdict: str  # correct | incorrect | invalid
    label: str | None  # the verifier's own label ("Correct", "A", ...); None when unparsed
    # Why invalid, or the verifier's category: CompassVerifier's INVALID / INCOMPLETE / REPETITIVE /
    # REFUSAL (CoT also CORRECT / INCORRECT); "unparsed" when the output held no verdict.
    detail: str | None
    raw: str  # the verifier's output as generated

    @property
    def parsed(self) -> bool:
        """False when the output held no verdict (never read as incorrect)."""
        return self.detail != UNPARSED


def invalid(raw: str) -> Verdict:
    """The outcome of an output that is not a verdict: invalid, keeping the text for inspection."""
    return Verdict(INVALID, None, UNPARSED, raw)
