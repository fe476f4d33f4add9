// The analytical model of Zhang et al., GPGPU'25 (shared/seeds/tc-memory-bound-gpgpu25.txt).
// Pure functions of plain numbers; units are in the names (flop, bytes, seconds).
#pragma once
#include <optional>

namespace ceiling {

double machine_balance(double peak_flop_per_s, double bandwidth_bytes_per_s);   // Eq. 1
double operational_intensity(double work_flop, double traffic_bytes);          // Eq. 2
double attainable_flop_per_s(double peak_flop_per_s, double bandwidth_bytes_per_s,
                             double intensity);                                 // Eq. 3
// Eq. 4: I < B. One convention everywhere: a balanced kernel (I = B) counts as compute-bound, so
// temporal blocking reaches compute-bound at the smallest t with t I >= B (Eq. 14).
bool is_memory_bound(double intensity, double balance);

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
// Fully overlapped speedup (Eq. 17 on both units, Tother = 0): max(Tm, Tc) / max(Tm, Tc/alpha)
// = max(B/I, 1) / max(B/I, 1/alpha): 1 for a memory-bound kernel with alpha >= 1, min(alpha, I/B)
// for a compute-bound one, below 1 when alpha < 1 and Tc/alpha exceeds Tm.
double overlapped_speedup(double alpha, double balance_cuda_core, double intensity);
// The most tensor cores can give whatever the overlap: with the same overlap phi on both units the
// speedup is a ratio of two affine functions of phi, so it lies between the un-overlapped (Eq. 19-22)
// and the overlapped value; the upper bound is the larger of the two, the lower bound the smaller.
double speedup_upper_bound(double alpha, double balance_cuda_core, double intensity);
double speedup_lower_bound(double alpha, double balance_cuda_core, double intensity);
// Workload bound, alpha -> infinity (Eq. 24): 1 + I/B.
double workload_speedup_limit(double balance_cuda_core, double intensity);
// Smallest integer temporal-blocking depth t with t*I >= B (Eq. 13-14 with Eq. 4's convention);
// the real threshold B/I is returned by temporal_blocking_threshold.
// The paper's hierarchy split (GPGPU'25 Figure 6): a working set of at most half the L2 capacity
// is "in L2" and sees the L2 bandwidth; a larger one is bounded by DRAM. The one rule for predict,
// validate and the kernels' cache hints.
bool fits_in_l2(double working_set_bytes, double l2_capacity_bytes);
double temporal_blocking_threshold(double balance, double intensity_one_step);
int temporal_blocking_min_steps(double balance, double intensity_one_step);

}  // namespace ceiling
