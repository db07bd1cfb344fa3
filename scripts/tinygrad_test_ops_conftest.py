"""pytest hooks for scripts/tinygrad-test-ops.sh: a per-test time limit (TEST_TIMEOUT seconds,
default 120) that fails the test instead of hanging the run, and each test's start and outcome
appended to $TG_TEST_OPS_RESULTS as it happens (JSON lines), so a run that crashes still says
which test crashed it and the runner can go on after it."""
import json
import os
import signal

import pytest


class TestTimeout(Exception):
  pass


def _record(entry: dict) -> None:
  with open(os.environ["TG_TEST_OPS_RESULTS"], "a") as f:
    f.write(json.dumps(entry) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
  def expire(signum, frame): raise TestTimeout(f"over {os.getenv('TEST_TIMEOUT', '120')} s")
  old = signal.signal(signal.SIGALRM, expire)
  signal.alarm(int(os.getenv("TEST_TIMEOUT", "120")))
  try:
    yield
  finally:
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def pytest_runtest_logstart(nodeid, location):
  _record({"id": nodeid, "start": True})


def pytest_runtest_logreport(report):
  if report.when == "call" or report.outcome != "passed":
    message = ""
    if report.failed:
      crash = getattr(report.longrepr, "reprcrash", None)
      message = crash.message if crash is not None else str(report.longrepr)[-2000:]
    outcome = report.outcome if report.when == "call" or report.skipped else "error"
    _record({"id": report.nodeid, "outcome": outcome, "message": message})
