"""The NVML calls rmpeer makes in its own process (rmpeer/machine/nvml.py), as C declarations
from nvml.h: read by nvml.py (a checkout: cffi parses them on NVML's thread) and by setup.py (a
wheel: parsed once when it is built). Plain text and nothing else: setup.py reads this file
without importing rmpeer. The enum values the calls take (clock types, NVML_SUCCESS) are data
in matrices/nvml.yaml."""

DECLARATIONS = """
    typedef struct nvmlDevice_st *nvmlDevice_t;
    int nvmlInit_v2(void);
    int nvmlShutdown(void);
    const char *nvmlErrorString(int result);
    int nvmlDeviceGetCount_v2(unsigned int *deviceCount);
    int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
    int nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device);
    int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock);
    int nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned int *clock);
    int nvmlDeviceGetPerformanceState(nvmlDevice_t device, int *pState);
    int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons);
    int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *clocksThrottleReasons);
    int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
    int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit);
"""
