// Two-pass VP9 inverse transform + add, N x N, BLOCKS blocks per workgroup, N invocations per
// block: invocation `lane` owns column `lane` in both passes. Included by itxN.comp, which
// defines N, BLOCKS, FINAL_SHIFT and the 1-D functions IDCT_N / IADST_N (and HAS_*).
//
// Job (uvec4): x = byte offset of the block's top-left pixel in `px`, y = stride in bytes
// (signed), z = first coefficient in `coefs` (or, for DC_ONLY, the DC value itself), w = 0.

#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

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

layout(push_constant) uniform Push {
    uint first_job;
    uint job_count;
} pc;

// Intermediate rows padded by one to spread the transposed accesses over memory banks.
const int ROW = N + 1;
shared int mid[BLOCKS * N * ROW];

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
    return FIRST == TX_WHT ? x : (x + (1 << (FINAL_SHIFT - 1))) >> FINAL_SHIFT;
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
    int stride = int(job.y);
    int column = int(job.x) + int(lane);

    if (DC_ONLY) {
        if (live) {
            int t = r14(r14(int(job.z) * 11585) * 11585);
            int r = final_round(t);
            for (int row = 0; row < N; row++)
                add_pixel(uint(column + row * stride), r);
        }
    } else {
        uint base = block * uint(N * ROW);
        if (live) {
            // First pass: column `lane` of the coefficients -> row `lane` of mid.
            int v[N], o[N];
            for (int k = 0; k < N; k++)
                v[k] = int(coefs[job.z + uint(k * N) + lane]);
            tx_1d(FIRST, v, true, o);
            for (int k = 0; k < N; k++)
                mid[base + lane * uint(ROW) + uint(k)] = trunc16(o[k]);
        }
        barrier();
        if (live) {
            // Second pass: column `lane` of mid -> column `lane` of the residual.
            int v[N], o[N];
            for (int k = 0; k < N; k++)
                v[k] = mid[base + uint(k * ROW) + lane];
            tx_1d(SECOND, v, false, o);
            for (int row = 0; row < N; row++)
                add_pixel(uint(column + row * stride), final_round(trunc16(o[row])));
        }
    }
}
