"""Schedules: cron in a time zone or every N minutes, checked, with the next firing times."""
from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from console.server.jobs import schedule as S

T0 = datetime(2026, 3, 28, 12, 0, tzinfo=timezone.utc)  # the night before Paris moves to summer time


def test_cron_in_a_time_zone_across_a_clock_change() -> None:
    nightly = S.parse("30 2 * * *", None, "Europe/Paris")
    times = S.next_times(nightly, T0, 3)
    # 02:30 does not exist in Paris on 29 March 2026: the library fires at the first moment after the gap
    assert [t.strftime("%d %H:%M %Z") for t in times] == ["29 03:30 CEST", "30 02:30 CEST", "31 02:30 CEST"]
    assert times[0].astimezone(timezone.utc) == datetime(2026, 3, 29, 1, 30, tzinfo=timezone.utc)
    assert times[1].tzinfo == ZoneInfo("Europe/Paris")
    assert S.readable(times[-1]).startswith("Tue 31 Mar 2026, 02:30")


def test_every_n_minutes_keeps_its_phase() -> None:
    every = S.parse(None, 5, None)
    anchor = datetime(2026, 12, 1, 10, 2, tzinfo=timezone.utc)
    later = datetime(2026, 12, 1, 11, 0, 30, tzinfo=timezone.utc)
    assert [t.minute for t in S.next_times(every, later, 3, anchor)] == [2, 7, 12]


def test_a_missed_occurrence_fires_once_then_the_schedule_resumes() -> None:
    minutely = S.parse("* * * * *", None, "UTC")
    due = datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc)
    now = datetime(2026, 12, 1, 11, 0, 30, tzinfo=timezone.utc)
    assert S.following(minutely, due, now, due) == datetime(2026, 12, 1, 11, 1, tzinfo=timezone.utc)
    assert S.following(minutely, due, due, due) == datetime(2026, 12, 1, 8, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize(("cron", "every", "tz", "message"), [
    ("61 * * * *", None, None, "higher than the maximum value"),
    ("* * *", None, None, "must have five fields"),
    (None, None, None, "give a schedule"),
    ("* * * * *", 5, None, "give a schedule"),
    (None, 0, None, "between 1 and"),
    ("* * * * *", None, "Mars/Olympus", "unknown time zone 'Mars/Olympus'"),
])
def test_bad_schedules_say_what_is_wrong(cron: str | None, every: int | None, tz: str | None, message: str) -> None:
    with pytest.raises(S.BadSchedule, match=message):
        S.parse(cron, every, tz)
