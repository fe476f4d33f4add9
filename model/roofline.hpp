// The analytical model of Zhang et al., GPGPU'25 (shared/seeds/tc-memory-bound-gpgpu25.txt).
// Pure functions of plain numbers; units are in the names (flop, bytes, seconds).
#pragma once
#include <optional>

namespace ceiling {

double machine_balance(double peak_flop_per_s, double bandwidth_bytes_per_s);   // Eq. 1
double operational_intensity(double work_flop, double traffic_bytes);          // Eq. 2
double attainable_flop_per_s(double peak_flop_per_s, double bandwidth_bytes_per_s,
                             double intensity);                                 // Eq. 3
bool is_memory_bound(double intensity, double balance);                         // Eq. 4: I < B

double compute_time_s(double work_flop, double peak_flop_per_s);                // Tcmp = W/P
double memory_time_s(double traffic_bytes, double bandwidth_bytes_per_s);       // Tmem = Q/BW
double overlapped_time_s(double t_mem, double t_cmp, double t_other = 0);       // Eq. 17
double unoverlapped_time_s(double t_mem, double t_cmp, double t_other = 0);     // Eq. 18
// Ours: T = max(Tmem,Tcmp) + (1-phi) min(Tmem,Tcmp) + Tother, phi in [0,1].
double partial_overlap_time_s(double t_mem, double t_cmp, double phi, double t_other = 0);

// Exact un-overlapped speedup of tensor cores with compute speed-up alpha (Eq. 19-20).
double tensor_core_speedup(double t_cmp_cuda_core, double t_mem, double t_other, double alpha);
// Bound for a kernel of intensity I on a machine of CUDA-core balance B (Eq. 22).
double speedup_bound(double alpha, double balance_cuda_core, double intensity);
// Bound for any memory-bound kernel, I -> B (Eq. 23): 2 - 2/(1+alpha).
double memory_bound_speedup_limit(double alpha);
// Workload bound, alpha -> infinity (Eq. 24): 1 + I/B.
double workload_speedup_limit(double balance_cuda_core, double intensity);
// Smallest integer temporal-blocking depth t with t*I > B (Eq. 13-14); the real threshold
// B/I is returned by temporal_blocking_threshold.
// The paper's hierarchy split (GPGPU'25 Figure 6): a working set of at most half the L2 capacity
// is "in L2" and sees the L2 bandwidth; a larger one is bounded by DRAM. The one rule for predict,
// validate and the kernels' cache hints.
bool fits_in_l2(double working_set_bytes, double l2_capacity_bytes);
double temporal_blocking_threshold(double balance, double intensity_one_step);
int temporal_blocking_min_steps(double balance, double intensity_one_step);

}  // namespace ceiling
