"""The task runner's inline mode (tests only, like Picard's FakeThreadPool): a job runs on the calling thread inside
``submit`` with the same callbacks, channels and progress as on the pool. The threaded runner's own behaviour (latest
wins across threads, delivery on the UI thread) is tested in test_errors_and_helpers.py and test_controllers.py."""

from __future__ import annotations

import threading

from desktop_memory.gui.tasks import TaskContext, TaskRunner


def test_inline_runner_runs_on_the_calling_thread_and_delivers_before_submit_returns(qtbot):
    runner = TaskRunner(inline=True)
    seen: list[object] = []
    caller = threading.get_ident()

    def job(ctx: TaskContext) -> bool:
        ctx.report("half")
        return threading.get_ident() == caller

    task = runner.submit(job, with_context=True, on_progress=seen.append, on_done=seen.append,
                         on_finished=lambda: seen.append("finished"))
    assert seen == ["half", True, "finished"]  # no wait of any kind: everything happened inside submit
    assert not task.running and runner.active() == []

    errors: list[str] = []
    runner.submit(lambda: 1 / 0, on_error=lambda exc, tb: errors.append(type(exc).__name__))
    assert errors == ["ZeroDivisionError"]
    runner.deleteLater()


def test_inline_default_makes_the_runners_a_window_builds_inline(qtbot, inline_tasks):
    runner = TaskRunner(max_threads=3)  # as MainWindow builds its own
    got: list[str] = []
    runner.submit(lambda: "old", channel="q", on_done=got.append)
    runner.submit(lambda: "new", channel="q", on_done=got.append)
    assert got == ["old", "new"]  # inline, each result lands before the next submit: nothing left to go stale
    assert TaskRunner(inline=False).inline is False  # a test about threading can still ask for the real pool
    runner.deleteLater()


def test_the_real_runner_is_threaded_by_default(qtbot):
    runner = TaskRunner()
    worker: list[bool] = []
    caller = threading.get_ident()
    runner.submit(lambda: threading.get_ident() != caller, on_done=worker.append)
    assert worker == []  # not inline: nothing is delivered before the event loop runs
    qtbot.waitUntil(lambda: worker == [True], timeout=3000)
    runner.wait(3000)
    runner.deleteLater()
