// The link probe's CUDA side (issue 16): host <-> device and GPU <-> GPU transfers for
// model/link.hpp's driver. Every timed transfer follows one whose output was checked word by word
// (a fresh pattern per call, the destination poisoned first) or, for kernel reads, by checksum.
#pragma once
#include <memory>

#include "../model/link.hpp"

namespace ceiling::probes {

// Throws gpu::CudaError when the CUDA runtime cannot start.
std::unique_ptr<LinkBackend> make_cuda_link_backend();

}  // namespace ceiling::probes
