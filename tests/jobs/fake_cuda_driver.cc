// A stand-in for the CUDA driver library (libcuda.so.1) in GPU detection
// tests: FAKE_CUDA_INIT_RESULT is what cuInit returns, FAKE_CUDA_DEVICES
// the device count.
extern "C" {

int cuInit(unsigned int /*flags*/) { return FAKE_CUDA_INIT_RESULT; }

int cuDeviceGetCount(int* count) {
  *count = FAKE_CUDA_DEVICES;
  return 0;
}

}  // extern "C"
