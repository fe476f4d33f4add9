// GPU test of the link probe's CUDA backend (issue 16): every host path of device 0 on a small
// transfer, each checked word by word (copies) or by checksum (kernel reads) before it is timed.
#include <doctest/doctest.h>

#include "gpu/gpu.hpp"
#include "model/link.hpp"
#include "probes/link_probe.hpp"

using namespace ceiling;

TEST_CASE("link probe: every host path of GPU 0 verifies and gives plausible figures") {
  auto b = probes::make_cuda_link_backend();
  REQUIRE(b->device_count() >= 1);
  CHECK(b->device(0).uuid.rfind("GPU-", 0) == 0);
  LinkProbeOptions o;
  o.large_bytes = std::uint64_t{16} << 20;
  o.repeats = 5;
  const LinkMeasurements m = measure_links(*b, {0}, o);
  REQUIRE(m.host_links.size() == 1);
  CHECK(m.pairs.empty());
  REQUIRE(m.host_links[0].figures.size() == std::size(kHostPaths));
  for (const auto& [p, f] : m.host_links[0].figures) {
    INFO(to_string(p), ": ", f.error);
    CHECK(f.error.empty());
    CHECK(f.bandwidth > 1e9);        // any PCIe/C2C link of a Hopper moves > 1 GB/s
    CHECK(f.bandwidth < 2e12);       // and < 2 TB/s (C2C is 900 GB/s)
    CHECK(f.bandwidth_max >= f.bandwidth);
    CHECK(f.latency_s > 0);
    CHECK(f.latency_s < 1e-3);
    CHECK(f.latency_min_s <= f.latency_s);
  }
  // Odd sizes and absent devices are refused, not mis-measured.
  CHECK_THROWS(b->time_transfers(LinkPath::h2d_pinned, 0, -1, 12, 1));
  CHECK_THROWS(b->time_transfers(LinkPath::h2d_pinned, b->device_count(), -1, 4096, 1));
  // One kernel read of 1 word (the latency size) and of an odd word count checksums right.
  CHECK(b->time_transfers(LinkPath::host_sm_read, 0, -1, 8, 2).size() == 2);
  CHECK(b->time_transfers(LinkPath::host_sm_read, 0, -1, 8 * 1001, 2).size() == 2);
}
