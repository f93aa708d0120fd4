// A fixture for tests/tools/check_comments.py: each numbered line below is one it must refuse.
// Fixed for issue 48, the one about the gate.
int noted() {
  return 1;  // see #48
}
/* measured Nov 23, 2026 on the H100 */
const char* kRunIdExample = "20261122T153122Z-a1b2c3";  // a run id's format, not a date: accepted
const char* kColour = "#1d2330";                         // a colour in a string: accepted
