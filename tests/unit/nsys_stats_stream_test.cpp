// nvtx_kern_sum is streamed and folded to one row per (range, style, kernel), so memory follows the
// aggregates, not the table rows (a capture of many threads or ranks repeats each kernel per thread).
#include <catch2/catch.hpp>
#include <cmath>

#include "llmprof/nsys_stats.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

const char* kHeader =
    "NVTX Range,Style,PID,TID,NVTX Inst,Kern Inst,Total Time (ns),Avg (ns),Med (ns),Min (ns),Max (ns),StdDev "
    "(ns),Kernel Name\n";

}  // namespace

TEST_CASE("nvtx_kern_sum rows of one kernel in several threads fold into one row with summed times") {
  TempDir temp;
  write_file(temp / "s_nvtx_kern_sum.csv", std::string(kHeader) +
                                               ":decode,PushPop,10,11,2,4,400,100.0,100.0,90,110,5.0,gemm\n"
                                               ":decode,PushPop,10,12,2,6,900,150.0,150.0,80,200,9.0,gemm\n"
                                               ":decode,PushPop,10,12,2,1,50,50.0,50.0,50,50,0.0,softmax\n"
                                               ":prefill,PushPop,10,11,1,3,300,100.0,100.0,100,100,0.0,gemm\n"
                                               ",,10,11,0,2,20,10.0,10.0,10,10,0.0,gemm\n");
  const auto stats = load_nsys_stats(temp / "s");
  REQUIRE(stats.has_value());
  REQUIRE(stats->range_kernels.has_value());
  const auto& rows = *stats->range_kernels;
  REQUIRE(rows.size() == 4);  // (decode, gemm), (decode, softmax), (prefill, gemm), (outside, gemm)
  const auto& gemm = rows[0];
  CHECK(gemm.range->name == "decode");
  CHECK(gemm.kernel_name == "gemm");
  CHECK(gemm.kernel_instances == 10);
  CHECK(gemm.range_instances == 4);
  CHECK(gemm.time.total_time_ns == 1300);
  CHECK(gemm.time.count == 10);
  CHECK(gemm.time.average_ns == Approx(130.0));
  CHECK(gemm.time.min_ns == 80);
  CHECK(gemm.time.max_ns == 200);
  CHECK(gemm.process_id == 10);
  CHECK(gemm.thread_id == 0);  // several threads
  CHECK(std::isnan(gemm.time.median_ns));
  CHECK(rows[1].kernel_name == "softmax");
  CHECK(rows[1].thread_id == 12);
  CHECK(rows[1].time.median_ns == 50.0);  // a single row keeps its own figures
  CHECK_FALSE(rows[3].range.has_value());
}

TEST_CASE("for_each_nsys_nvtx_kernel_row hands over every row and keeps none; errors name the file") {
  TempDir temp;
  write_file(temp / "t.csv",
             std::string(kHeader) +
                 ":decode,PushPop,1,1,1,1,5,5.0,5.0,5,5,0.0,a\n:decode,PushPop,1,1,1,1,7,7.0,7.0,7,7,0.0,b\n");
  std::int64_t total = 0;
  int rows = 0;
  REQUIRE(for_each_nsys_nvtx_kernel_row(temp / "t.csv", [&](NvtxKernelRow&& row) {
            total += row.time.total_time_ns;
            ++rows;
          }).has_value());
  CHECK(rows == 2);
  CHECK(total == 12);
  write_file(temp / "bad.csv", std::string(kHeader) + ":decode,PushPop,1,1,1,x,5,5.0,5.0,5,5,0.0,a\n");
  const auto bad = for_each_nsys_nvtx_kernel_row(temp / "bad.csv", [](NvtxKernelRow&&) {});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().describe().find("bad.csv") != std::string::npos);
}
