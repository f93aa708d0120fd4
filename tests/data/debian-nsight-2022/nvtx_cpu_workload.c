#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <time.h>
static void spin(long ns){struct timespec a,b;clock_gettime(CLOCK_MONOTONIC,&a);do{clock_gettime(CLOCK_MONOTONIC,&b);}while((b.tv_sec-a.tv_sec)*1000000000L+(b.tv_nsec-a.tv_nsec)<ns);}
int main(){nvtxRangePushA("prefill");spin(20000000);nvtxRangePop();
nvtxRangePushA("decode");for(int i=0;i<5;i++){nvtxRangePushA("decode_step");spin(2000000);nvtxRangePop();}nvtxRangePop();printf("done\n");return 0;}
