// The frame path's saved line (src/vp9/frame/submit.rs): the last line of a superblock row,
// reconstructed and not yet loop filtered, copied for the intra prediction of the row below,
// which a later part reconstructs after this one's loop filter (FFmpeg's intra_pred_data). A
// workgroup per plane; the job is the superblock row.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#include "vp9_frame.glsl"

void main()
{
    uint p = gl_WorkGroupID.x;
    if (p >= 3u)
        return;
    int y = ((int(pc.first_job) + 1) * 64 >> ss_v(p)) - 1;
    int width = plane_size(p).x;
    uint line = header(H_LINES + p);
    for (int x = int(gl_LocalInvocationID.x); x < width; x += 64)
        data_bytes[line + uint(x)] = cur[cur_at(p, x, y)];
}
