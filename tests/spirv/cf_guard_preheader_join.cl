// The control-flow shape guard_preheader_join (tests/data/cf/guard_preheader_join.mir), through SPIR-V:
// its OpenCL C twin compiled by clang-22 -target spirv64.
// launch: --grid 8 --block 8 --buffer out=i32:fill:0xdeadbeef:8 --arg out=@out --arg n=3
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:64 --arg out=@out --arg n=40
// launch: --grid 192 --block 96 --buffer out=i32:fill:0xdeadbeef:96 --arg out=@out --arg n=90
#include "../data/cf/guard_preheader_join.cl"
