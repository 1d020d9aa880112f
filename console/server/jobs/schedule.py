"""A job's schedule: a cron expression in a time zone, or every N minutes; when it fires next.

APScheduler 3's triggers do the cron arithmetic (day-of-week names, steps, daylight-saving gaps
and repeats); the store keeps the due time and the scheduler (console/server/jobs/scheduler.py)
claims it. Misfires: an occurrence that came due while no server ran fires once when one starts,
and the next is the first one after that moment (the ones missed in between are not made up).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MAX_EVERY_MINUTES = 60 * 24 * 366
MAX_ZONE_NAME = 64  # the longest IANA name is 32; a longer one is no zone (and too long a file name)
TICK = timedelta(microseconds=1)


class BadSchedule(ValueError):
    """A schedule that cannot fire; the message says what to write instead."""


@dataclass(frozen=True)
class Schedule:
    kind: str  # "cron" | "every"
    cron: str = ""
    every_minutes: int | None = None
    timezone: str = "UTC"

    def describe(self) -> str:
        if self.kind == "every":
            n = self.every_minutes or 0
            return f"every {n} minute{'s' if n != 1 else ''}"
        return f"cron {self.cron} ({self.timezone})"


def _zone(name: str) -> ZoneInfo:
    if len(name) > MAX_ZONE_NAME:
        raise BadSchedule(f"unknown time zone {name[:40]!r}… ({len(name)} characters; an IANA name such as UTC "
                          f"or Europe/Paris has at most {MAX_ZONE_NAME})")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name the tz database cannot open
        raise BadSchedule(f"unknown time zone {name!r} (an IANA name such as UTC or Europe/Paris)") from None


def parse(cron: str | None, every_minutes: int | None, tz: str | None) -> Schedule:
    """A checked schedule from what a client sent: exactly one of cron and every_minutes."""
    tz = tz or "UTC"
    _zone(tz)
    if (cron is None or not cron.strip()) == (every_minutes is None):
        raise BadSchedule("give a schedule: 'cron' (five fields, e.g. \"0 2 * * *\") or 'every_minutes'")
    if every_minutes is not None:
        if not 1 <= every_minutes <= MAX_EVERY_MINUTES:
            raise BadSchedule(f"'every_minutes' must be between 1 and {MAX_EVERY_MINUTES}")
        return Schedule("every", every_minutes=every_minutes, timezone=tz)
    assert cron is not None
    expr = " ".join(cron.split())
    if len(expr.split(" ")) != 5:
        raise BadSchedule(f"cron {cron!r} must have five fields: minute hour day-of-month month day-of-week")
    schedule = Schedule("cron", cron=expr, timezone=tz)
    _trigger(schedule, datetime.now(timezone.utc))  # the library's own check of every field
    return schedule


def _trigger(schedule: Schedule, anchor: datetime) -> Any:
    from apscheduler.triggers.cron import CronTrigger
    from apscheduler.triggers.interval import IntervalTrigger

    zone = _zone(schedule.timezone)
    if schedule.kind == "every":
        # The grid starts at the job's creation, so "every 5 minutes" keeps its phase across restarts.
        return IntervalTrigger(minutes=schedule.every_minutes or 1, start_date=anchor, timezone=zone)
    try:
        return CronTrigger.from_crontab(schedule.cron, timezone=zone)
    except ValueError as exc:
        raise BadSchedule(f"cron {schedule.cron!r}: {exc}") from None


def next_times(schedule: Schedule, after: datetime, count: int = 3, anchor: datetime | None = None) -> list[datetime]:
    """The next `count` firing times strictly after `after`, in the schedule's time zone."""
    trigger = _trigger(schedule, anchor or after)
    zone = _zone(schedule.timezone)
    out: list[datetime] = []
    at = after + TICK
    previous = None
    while len(out) < count:
        nxt = trigger.get_next_fire_time(previous, at)
        if nxt is None:
            break
        # Through UTC and back: a time in a spring-forward gap (02:30 that night) reads as the
        # instant it is (03:30 summer time), not as a wall time that never exists.
        out.append(nxt.astimezone(timezone.utc).astimezone(zone))
        previous, at = nxt, nxt + TICK
    return out


def first_after(schedule: Schedule, moment: datetime, anchor: datetime | None = None) -> datetime | None:
    found = next_times(schedule, moment, 1, anchor)
    return found[0].astimezone(timezone.utc) if found else None


def following(schedule: Schedule, due: datetime, now: datetime, anchor: datetime) -> datetime | None:
    """The occurrence after `due` has fired at `now`: the first one after both (misfires fire once)."""
    return first_after(schedule, max(due, now), anchor)


def readable(moment: datetime) -> str:
    """'Wed 2 Dec 2026, 02:00 CET': what the Schedule dialog shows."""
    return f"{moment:%a} {moment.day} {moment:%b %Y, %H:%M %Z}".strip()
