// A fixture for tests/tools/check_comments.py.
int tool() {
  return 2;  // slower since 2026-11-23
}
