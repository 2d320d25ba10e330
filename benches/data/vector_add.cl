// Twin of examples/vector_add.mir.
#include "prelude.h"
__kernel void vector_add(__global const float *a, __global const float *b, __global float *c) {
    int i = GROUP_ID_X() * LOCAL_SIZE_X() + LOCAL_ID_X();
    c[i] = a[i] + b[i];
}
