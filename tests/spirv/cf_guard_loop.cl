// The control-flow shape guard_loop (tests/data/cf/guard_loop.mir), through SPIR-V:
// its OpenCL C twin compiled by clang-22 -target spirv64.
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:192 --arg n=40 --arg out=@out
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:192 --arg n=150 --arg out=@out
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:192 --arg n=0 --arg out=@out
#include "../data/cf/guard_loop.cl"
