"""The output budget's arithmetic (sandbox/supervisor/output_budget.py): what
is forwarded, what is dropped and counted, and the end that is kept."""

import pytest

from output_budget import REPORT_INTERVAL, OutputBudget, SkippedStream


def test_no_budget_forwards_everything():
    budget = OutputBudget({"command": "true"})
    assert budget.split(b"x" * 10) == (b"x" * 10, b"")


def test_the_budget_is_spent_across_chunks_then_everything_is_past_it():
    budget = OutputBudget({"outputBudget": {"forwardBytes": 5, "tailBytes": 2}})
    assert budget.split(b"abc") == (b"abc", b"")
    assert budget.split(b"defg") == (b"de", b"fg")
    assert budget.split(b"hi") == (b"", b"hi")


@pytest.mark.parametrize("bad", [{"forwardBytes": -1, "tailBytes": 0}, {"forwardBytes": 1}, {"forwardBytes": True, "tailBytes": 0}, {"forwardBytes": 1.5, "tailBytes": 0}])
def test_a_bad_budget_is_a_value_error_naming_the_field(bad):
    with pytest.raises(ValueError, match="outputBudget"):
        OutputBudget({"outputBudget": bad})


def test_dropped_bytes_and_line_feeds_are_counted_and_the_end_kept_whole():
    stream = SkippedStream(4, now=0.0)
    data = b"one\ntwo\nthree\nfour\n"
    for i in range(0, len(data), 3):
        stream.take(data[i:i + 3])
    report = stream.report(now=1.0)
    tail = stream.take_tail()
    assert tail == b"our\n"
    assert report == {"bytes": len(data) - 4, "lineFeeds": 3, "endsWithLineFeed": False}


def test_with_no_kept_end_every_byte_is_dropped_and_the_last_byte_is_known():
    stream = SkippedStream(0, now=0.0)
    stream.take(b"a\nb\n")
    assert stream.report() == {"bytes": 4, "lineFeeds": 2, "endsWithLineFeed": True}
    assert stream.take_tail() == b""


def test_reports_are_deltas_at_most_every_interval():
    stream = SkippedStream(1, now=0.0)
    stream.take(b"xxxx")
    assert not stream.due(REPORT_INTERVAL / 2)
    assert stream.due(REPORT_INTERVAL)
    assert stream.report(now=REPORT_INTERVAL)["bytes"] == 3
    assert stream.report(now=2 * REPORT_INTERVAL) is None
    stream.take(b"yy")
    assert stream.report()["bytes"] == 2
    assert stream.take_tail() == b"y"


def test_a_drain_rate_paces_reads_to_the_rate_on_average():
    stream = SkippedStream(0, drain_rate=1000, now=10.0)
    assert stream.resume_at() == 10.0
    stream.take(b"x" * 500)
    assert stream.resume_at() == pytest.approx(10.5)
    stream.take(b"x" * 1500)
    assert stream.resume_at() == pytest.approx(12.0)


def test_no_drain_rate_never_pauses():
    stream = SkippedStream(0, now=0.0)
    stream.take(b"x" * 10**6)
    assert stream.resume_at() is None


def test_the_drain_rate_is_optional_and_checked():
    assert OutputBudget({"outputBudget": {"forwardBytes": 1, "tailBytes": 0}}).drain_rate == 0
    assert OutputBudget({"outputBudget": {"forwardBytes": 1, "tailBytes": 0, "drainBytesPerSecond": 5}}).drain_rate == 5
    with pytest.raises(ValueError, match="drainBytesPerSecond"):
        OutputBudget({"outputBudget": {"forwardBytes": 1, "tailBytes": 0, "drainBytesPerSecond": -5}})
