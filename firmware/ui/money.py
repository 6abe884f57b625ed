"""Money as the player reads it: integer credits, and the same amount in the currency.

Everything is integer arithmetic: a credit is ``denomination`` cents (the configuration's
``[terminal] denomination``), an amount in cents is shown as whole units and two decimals. No
float ever holds money here.
"""

from __future__ import annotations

from dataclasses import dataclass

from firmware.ui.messages import key, text

#: How each currency writes an amount (the catalogue holds the patterns); others use the code.
CURRENCY_FORMATS: dict[str, str] = {
    "USD": key("currency.usd"),
    "CAD": key("currency.cad"),
    "AUD": key("currency.aud"),
    "EUR": key("currency.eur"),
    "GBP": key("currency.gbp"),
}


def group(n: int) -> str:
    """``1234567`` -> ``1,234,567`` (the sign kept)."""
    return f"{n:,}"


@dataclass(frozen=True, slots=True)
class Money:
    denomination: int = 1          #: cents per credit
    currency: str = "USD"

    def __post_init__(self) -> None:
        if not isinstance(self.denomination, int) or self.denomination < 1:
            raise ValueError(f"a denomination is a whole number of cents >= 1, not {self.denomination!r}")

    def cents(self, credits: int) -> int:
        return credits * self.denomination

    def amount(self, cents: int) -> str:
        """``2000`` cents -> ``$20.00``."""
        sign = "-" if cents < 0 else ""
        whole, part = divmod(abs(cents), 100)
        figure = f"{group(whole)}.{part:02d}"
        pattern = CURRENCY_FORMATS.get(self.currency)
        if pattern is None:
            return sign + text("currency.other", amount=figure, code=self.currency)
        return sign + text(pattern, amount=figure)

    def currency_of(self, credits: int) -> str:
        """What ``credits`` credits are worth, in the currency."""
        return self.amount(self.cents(credits))

    def credits(self, credits: int) -> str:
        """``2000`` -> ``2,000 credits`` (``1 credit``)."""
        if abs(credits) == 1:
            return text("money.credit_one", n=group(credits))
        return text("money.credits", n=group(credits))

    def signed(self, credits: int) -> str:
        """A win or loss: ``+40`` / ``-10`` credits, no unit."""
        return f"{credits:+,}"
