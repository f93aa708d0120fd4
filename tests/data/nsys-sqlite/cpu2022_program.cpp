// A CPU-only stand-in for a decode loop: NVTX ranges decode > decode_step > {forward, sample},
// the first step slower (warm-up), plus a start/end range and a second domain.
#include <nvtx3/nvToolsExt.h>
#include <chrono>
#include <thread>
static void busy_us(int us) {
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}
int main() {
  nvtxDomainHandle_t sched = nvtxDomainCreateA("scheduler");
  nvtxRangePushA("prefill");
  busy_us(3000);
  nvtxRangePop();
  nvtxRangePushA("decode");
  nvtxRangeId_t whole = nvtxRangeStartA("generation");
  for (int step = 0; step < 12; ++step) {
    nvtxRangePushA("decode_step");
    nvtxRangePushA("forward");
    busy_us(step == 0 ? 6000 : 1000 + 50 * (step % 4));
    nvtxRangePop();
    nvtxRangePushA("sample");
    busy_us(200);
    nvtxRangePop();
    nvtxEventAttributes_t attributes{};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = "schedule";
    nvtxDomainRangePushEx(sched, &attributes);
    busy_us(100);
    nvtxDomainRangePop(sched);
    nvtxRangePop();
  }
  nvtxRangeEnd(whole);
  nvtxRangePop();
  return 0;
}
