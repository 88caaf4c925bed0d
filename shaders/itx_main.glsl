// Two-pass VP9 inverse transform + add, N x N, BLOCKS blocks per workgroup, N invocations per
// block: invocation `lane` owns column `lane` in both passes. Included by itxN.comp, which
// defines N, BLOCKS, FINAL_SHIFT and the 1-D functions IDCT_N / IADST_N (and HAS_*).
//
// Job (uvec4): x = byte offset of the block's top-left pixel in `px`, y = stride in bytes
// (signed), z = first coefficient in `coefs` (or, for DC_ONLY, the DC value itself), w = flags:
// FROM_FFMPEG: a call of FFmpeg's decoder. If one of its 16-bit lanes overflows (damaged
// streams), FFmpeg's C and SIMD can differ and the decoder's result is that of the function it
// runs: such a block is left unwritten and listed in `overflow`, for the host to run it so.

#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#include "jobs.glsl"

const int TX_DCT = 0;
const int TX_ADST = 1;
const int TX_WHT = 2;

// Which 1-D transform each pass uses; the pipelines specialise these.
layout(constant_id = 0) const int FIRST = TX_DCT;
layout(constant_id = 1) const int SECOND = TX_DCT;
// FFmpeg's idct_idct shortcut for eob == 1: only the DC coefficient matters.
layout(constant_id = 2) const bool DC_ONLY = false;

layout(local_size_x = N * BLOCKS, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Jobs { uvec4 jobs[]; };
layout(std430, set = 0, binding = 1) readonly buffer Coefs { int16_t coefs[]; };
layout(std430, set = 0, binding = 2) buffer Pixels { uint8_t px[]; };
layout(std430, set = 0, binding = 3) buffer Overflow {
    uint overflow_count;
    uint overflow_jobs[];
};

const uint FROM_FFMPEG = 1u;

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

// Intermediate rows padded by one to spread the transposed accesses over memory banks.
const int ROW = N + 1;
shared int mid[BLOCKS * N * ROW];
// Each invocation's record of its 16-bit lanes (see itx_1d.glsl), combined per block.
shared int block_lanes[BLOCKS * N];

void tx_1d(int kind, in int v[N], bool first_pass, out int o[N])
{
#ifdef HAS_WHT
    if (kind == TX_WHT) { iwht4(v, first_pass, o); return; }
#endif
#ifdef HAS_ADST
    if (kind == TX_ADST) { IADST_N(v, o); return; }
#endif
    IDCT_N(v, o);
}

int final_round(int x)
{
    return FIRST == TX_WHT ? x : v(x + (1 << (FINAL_SHIFT - 1))) >> FINAL_SHIFT;
}

void add_pixel(uint at, int r)
{
    px[at] = uint8_t(clamp(int(px[at]) + r, 0, 255));
}

void main()
{
    uint lane = gl_LocalInvocationID.x % uint(N);
    uint block = gl_LocalInvocationID.x / uint(N);
    uint j = gl_WorkGroupID.x * uint(BLOCKS) + block;
    bool live = j < pc.job_count;
    uvec4 job = live ? jobs[pc.first_job + j] : uvec4(0);
    live = live && job.x != SKIP_JOB; // taken out of the batch again
    int stride = int(job.y);
    // Byte offsets stay unsigned (a binding may span up to 2 GiB); a row's step is signed.
    uint column = job.x + lane;

    if (DC_ONLY) {
        // No 16-bit lane can overflow here: |dc| <= 32768 keeps every step in range.
        if (live) {
            int t = r14(r14(int(job.z) * 11585) * 11585);
            int r = final_round(t);
            for (int row = 0; row < N; row++)
                add_pixel(column + uint(row * stride), r);
        }
    } else {
        uint base = block * uint(N * ROW);
        int o[N];
        if (live) {
            // First pass: column `lane` of the coefficients -> row `lane` of mid.
            int c[N];
            for (int k = 0; k < N; k++)
                c[k] = int(coefs[job.z + uint(k * N) + lane]);
            tx_1d(FIRST, c, true, o);
            for (int k = 0; k < N; k++)
                mid[base + lane * uint(ROW) + uint(k)] = trunc16(o[k]);
        }
        barrier();
        if (live) {
            // Second pass: column `lane` of mid -> column `lane` of the residual.
            int c[N];
            for (int k = 0; k < N; k++)
                c[k] = mid[base + uint(k * ROW) + lane];
            tx_1d(SECOND, c, false, o);
            for (int row = 0; row < N; row++)
                o[row] = final_round(trunc16(o[row]));
        }
        block_lanes[block * uint(N) + lane] = lanes;
        barrier();
        if (live) {
            int all = 0;
            for (int k = 0; k < N; k++)
                all |= block_lanes[block * uint(N) + uint(k)];
            if ((job.w & FROM_FFMPEG) != 0u && lanes_overflowed(all)) {
                if (lane == 0u)
                    overflow_jobs[atomicAdd(overflow_count, 1u)] = pc.first_job + j;
            } else {
                for (int row = 0; row < N; row++)
                    add_pixel(column + uint(row * stride), o[row]);
            }
        }
    }
}
