"""pytest hooks for scripts/tinygrad-test-ops.sh: a per-test time limit (TEST_TIMEOUT seconds,
default 120) that fails the test instead of hanging the run."""
import os
import signal

import pytest


class TestTimeout(Exception):
  pass


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
