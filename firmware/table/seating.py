"""Who sits where at the table: one seat per station, its configured seat or the first free one;
a station's seat is kept while it has a bet in the round (it may come back), else freed."""

from __future__ import annotations

from dataclasses import dataclass

from firmware.table.errors import TableError


@dataclass
class Station:
    station: str
    seat: int
    online: bool = True


class Seating:
    def __init__(self, max_seats: int, max_stations: int) -> None:
        self.max_seats = max_seats
        self.max_stations = max_stations
        self.stations: dict[str, Station] = {}

    def seat(self, station: str, wanted: int) -> int:
        """``station``'s seat (``wanted``, 0: any); :class:`TableError` says why it cannot sit."""
        known = self.stations.get(station)
        if known is not None:
            if wanted and wanted != known.seat:
                raise TableError(f"{station} sits at seat {known.seat}, not {wanted}")
            known.online = True
            return known.seat
        taken = {s.seat: s.station for s in self.stations.values()}
        if len(self.stations) >= self.max_stations:
            raise TableError(f"the table is full ({self.max_stations} stations)")
        if wanted:
            if not 1 <= wanted <= self.max_seats:
                raise TableError(f"seat {wanted} does not exist; seats are 1 to {self.max_seats}")
            if wanted in taken:
                raise TableError(f"seat {wanted} is taken by {taken[wanted]}")
            seat = wanted
        else:
            free = [s for s in range(1, self.max_seats + 1) if s not in taken]
            if not free:
                raise TableError("no seat is free")
            seat = free[0]
        self.stations[station] = Station(station, seat)
        return seat

    def hold(self, station: str, seat: int) -> None:
        """A station with a bet in the round, not (yet) connected: its seat is kept (a restart)."""
        self.stations.setdefault(station, Station(station, seat, online=False))

    def leave(self, station: str, has_bet: bool) -> bool:
        """The station's connection ended; False if it was not seated."""
        known = self.stations.get(station)
        if known is None:
            return False
        if has_bet:
            known.online = False
        else:
            del self.stations[station]
        return True

    def free_offline(self) -> None:
        """A new round: the seats of stations that did not come back are free again."""
        for name in [s.station for s in self.stations.values() if not s.online]:
            del self.stations[name]

    def online(self) -> set[str]:
        return {s.station for s in self.stations.values() if s.online}

    def is_online(self, station: str) -> bool:
        known = self.stations.get(station)
        return known is not None and known.online
