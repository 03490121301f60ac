// The GPU copy of device/graph_runtime.cpp: the same source, compiled by
// nvcc against the CUDA runtime, registers the graph runtime of Device::cuda.
#include "device/graph_runtime.cpp"
