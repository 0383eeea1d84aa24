"""The public surface and the front ends: calling forms, out=, array kinds, ONNX, OpenVINO, fuse,
ElementwiseKernel, Dask."""
