// The control-flow shape if_divergent_in_uniform (tests/data/cf/if_divergent_in_uniform.mir), through SPIR-V:
// its OpenCL C twin compiled by clang-22 -target spirv64.
// launch: --grid 192 --block 96 --buffer out=i32:fill:0xdeadbeef:576 --arg out=@out --arg u=0
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:384 --arg out=@out --arg u=1
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:384 --arg out=@out --arg u=5
#include "../data/cf/if_divergent_in_uniform.cl"
