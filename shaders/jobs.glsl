// What every kernel's jobs share. A job whose first word (its pixel) is SKIP_JOB completed
// early on the CPU (batch::SKIP_JOB): the kernel leaves it alone.
const uint SKIP_JOB = 0xffffffffu;
