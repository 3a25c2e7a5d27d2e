#include "fabric/plane_capacity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace geodesic::fabric {

double NicCapacityPerPlaneGbps(const v1::Fabric& fabric) {
  return static_cast<double>(fabric.gpus()) * fabric.nic_speed_gbps();
}

double UplinkCapacityGbps(const v1::FabricLayer& layer) {
  return static_cast<double>(layer.switch_count()) * layer.uplink_ports() * layer.port_speed_gbps();
}

double DownlinkCapacityGbps(const v1::FabricLayer& layer) {
  return static_cast<double>(layer.switch_count()) * layer.downlink_ports() *
         layer.port_speed_gbps();
}

double PlaneCapacityGbps(const v1::Fabric& fabric) {
  const int layer_count = fabric.layers_size();
  if (layer_count == 0) return 0;
  double capacity = NicCapacityPerPlaneGbps(fabric);
  for (int i = 0; i < layer_count; ++i) {
    const v1::FabricLayer& layer = fabric.layers(i);
    capacity = std::min(capacity, DownlinkCapacityGbps(layer));
    if (i + 1 < layer_count) capacity = std::min(capacity, UplinkCapacityGbps(layer));
  }
  return capacity;
}

double FabricCapacityGbps(const v1::Fabric& fabric) {
  return static_cast<double>(fabric.planes()) * PlaneCapacityGbps(fabric);
}

std::string FormatBandwidth(double gbps) {
  const char* unit = "Gb/s";
  double value = gbps;
  if (std::fabs(gbps) >= 1e6) {
    value = gbps / 1e6;
    unit = "Pb/s";
  } else if (std::fabs(gbps) >= 1e3) {
    value = gbps / 1e3;
    unit = "Tb/s";
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%.2f", value);
  std::string number = text;
  if (number.find('.') != std::string::npos) {
    number.erase(number.find_last_not_of('0') + 1);
    if (number.back() == '.') number.pop_back();
  }
  return number + " " + unit;
}

}  // namespace geodesic::fabric
