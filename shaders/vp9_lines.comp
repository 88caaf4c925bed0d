// The frame path's saved lines (src/vp9/frame/wavefront.rs): the last line of a superblock
// of a part's last row, reconstructed and not yet loop filtered, copied for the intra
// prediction of the row below, which a later part reconstructs after this one's loop filter
// (FFmpeg's intra_pred_data). A workgroup per plane of a superblock (the job: the superblock,
// the plane at bit 24), an invocation per pixel.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#include "vp9_frame.glsl"

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
    uint job = data[header(H_JOBS) + pc.first_job + gl_WorkGroupID.x];
    uint sb = job & 0xffffffu, p = (job >> 24) & 3u;
    uint sb_cols = header(H_SB_COLS);
    int y = (int(sb / sb_cols + 1u) * 64 >> ss_v(p)) - 1;
    int x = int((sb % sb_cols) * 64u >> ss_h(p)) + int(gl_LocalInvocationID.x);
    int end = min(x - int(gl_LocalInvocationID.x) + (64 >> ss_h(p)), plane_size(p).x);
    if (x < end)
        data_bytes[header(H_LINES + p) + uint(x)] = cur[cur_at(p, x, min(y, plane_size(p).y - 1))];
}
