// VP9 16x16 inverse transforms (every type FFmpeg has at this size), 8-bit.
#version 450
#extension GL_GOOGLE_include_directive : require
#define N 16
#define BLOCKS 8
#define FINAL_SHIFT 6
#define IDCT_N idct16
#define IADST_N iadst16
#define HAS_ADST
#include "itx_1d.glsl"
#include "itx_main.glsl"
