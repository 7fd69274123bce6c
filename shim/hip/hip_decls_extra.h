/*
 * Entry points libamdhip64 exports that no HIP header declares: the
 * registration calls clang emits into every HIP program's constructors.
 * gen-hip-api reads this file with the headers.  __hipRegisterFunction is
 * how the backend learns which host stub (the pointer hipLaunchKernel gets)
 * names which kernel of which fat binary.
 */
void** __hipRegisterFatBinary(const void* data);
void __hipUnregisterFatBinary(void** modules);
void __hipRegisterFunction(void** modules, const void* hostFunction, char* deviceFunction,
                           const char* deviceName, unsigned int threadLimit, void* tid,
                           void* bid, void* blockDim, void* gridDim, int* wSize);
