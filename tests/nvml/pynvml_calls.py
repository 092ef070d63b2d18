#!/usr/bin/python3
"""NVIDIA's Python bindings (Debian's python3-pynvml, nvidia-ml-py) on the
NVML the process loads: the calls nvitop and gpustat make, each printed as
"ok: ..." or "FAIL: ...", then a line per GPU of what they said.

    pynvml_calls.py calls     every call, on every GPU
    pynvml_calls.py sample N  N lines "second util temp power energy" of
                              GPU 0, each 0.3 s into a boot-time second
    pynvml_calls.py procs     per GPU: "gpu I: PID NAME USED_MIB ..." and the
                              memory in use
"""
import sys
import time

import pynvml as N

CALLS = [
    ("nvmlDeviceGetName", ()), ("nvmlDeviceGetUUID", ()), ("nvmlDeviceGetPciInfo", ()),
    ("nvmlDeviceGetMemoryInfo", ()), ("nvmlDeviceGetBAR1MemoryInfo", ()),
    ("nvmlDeviceGetTemperature", (N.NVML_TEMPERATURE_GPU,)),
    ("nvmlDeviceGetTemperatureThreshold", (N.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN,)),
    ("nvmlDeviceGetTemperatureThreshold", (N.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN,)),
    ("nvmlDeviceGetPowerUsage", ()), ("nvmlDeviceGetPowerManagementLimit", ()),
    ("nvmlDeviceGetPowerManagementDefaultLimit", ()),
    ("nvmlDeviceGetPowerManagementLimitConstraints", ()), ("nvmlDeviceGetEnforcedPowerLimit", ()),
    ("nvmlDeviceGetTotalEnergyConsumption", ()), ("nvmlDeviceGetPerformanceState", ()),
    ("nvmlDeviceGetUtilizationRates", ()), ("nvmlDeviceGetEncoderUtilization", ()),
    ("nvmlDeviceGetDecoderUtilization", ()),
    ("nvmlDeviceGetPcieThroughput", (N.NVML_PCIE_UTIL_TX_BYTES,)),
    ("nvmlDeviceGetPcieThroughput", (N.NVML_PCIE_UTIL_RX_BYTES,)),
    ("nvmlDeviceGetCurrPcieLinkGeneration", ()), ("nvmlDeviceGetCurrPcieLinkWidth", ()),
    ("nvmlDeviceGetMaxPcieLinkGeneration", ()), ("nvmlDeviceGetMaxPcieLinkWidth", ()),
    ("nvmlDeviceGetCurrentClocksThrottleReasons", ()),
    ("nvmlDeviceGetSupportedClocksThrottleReasons", ()),
    ("nvmlDeviceGetClockInfo", (N.NVML_CLOCK_GRAPHICS,)), ("nvmlDeviceGetClockInfo", (N.NVML_CLOCK_SM,)),
    ("nvmlDeviceGetClockInfo", (N.NVML_CLOCK_MEM,)), ("nvmlDeviceGetMaxClockInfo", (N.NVML_CLOCK_SM,)),
    ("nvmlDeviceGetApplicationsClock", (N.NVML_CLOCK_GRAPHICS,)),
    ("nvmlDeviceGetDefaultApplicationsClock", (N.NVML_CLOCK_GRAPHICS,)),
    ("nvmlDeviceGetSupportedMemoryClocks", ()), ("nvmlDeviceGetComputeMode", ()),
    ("nvmlDeviceGetPersistenceMode", ()), ("nvmlDeviceGetDisplayActive", ()),
    ("nvmlDeviceGetDisplayMode", ()), ("nvmlDeviceGetEccMode", ()), ("nvmlDeviceGetMigMode", ()),
    ("nvmlDeviceGetComputeRunningProcesses", ()), ("nvmlDeviceGetGraphicsRunningProcesses", ()),
    ("nvmlDeviceGetEncoderStats", ()), ("nvmlDeviceGetFBCStats", ()),
    ("nvmlDeviceIsMigDeviceHandle", ()), ("nvmlDeviceGetNumFans", ()),
]


def calls():
    fails = 0
    for i in range(N.nvmlDeviceGetCount()):
        h = N.nvmlDeviceGetHandleByIndex(i)
        for name, args in CALLS:
            try:
                getattr(N, name)(h, *args)
            except N.NVMLError as e:
                fails += 1
                print("FAIL: gpu %d %s%s: %s" % (i, name, args, e))
        # Without a fan (data-center GPUs), NOT_SUPPORTED, as on a real node.
        try:
            N.nvmlDeviceGetFanSpeed(h)
            fan = "read"
        except N.NVMLError_NotSupported:
            fan = "N/A"
        print("gpu %d: %dC %dW/%dW %d%% fan %s" % (
            i, N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU),
            N.nvmlDeviceGetPowerUsage(h) // 1000, N.nvmlDeviceGetPowerManagementLimit(h) // 1000,
            N.nvmlDeviceGetUtilizationRates(h).gpu, fan))
    print("ok: %d calls on %d GPUs, %d failed" % (len(CALLS), N.nvmlDeviceGetCount(), fails))


def sample(n):
    h = N.nvmlDeviceGetHandleByIndex(0)
    for _ in range(n):
        now = time.clock_gettime(time.CLOCK_BOOTTIME)
        time.sleep(1.3 - (now % 1.0))
        sec = int(time.clock_gettime(time.CLOCK_BOOTTIME))
        print(sec, N.nvmlDeviceGetUtilizationRates(h).gpu,
              N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU),
              N.nvmlDeviceGetPowerUsage(h), N.nvmlDeviceGetTotalEnergyConsumption(h), flush=True)


def procs():
    for i in range(N.nvmlDeviceGetCount()):
        h = N.nvmlDeviceGetHandleByIndex(i)
        line = []
        for p in N.nvmlDeviceGetComputeRunningProcesses(h):
            used = p.usedGpuMemory // (1 << 20) if p.usedGpuMemory is not None else "N/A"
            line.append("%d %s %s" % (p.pid, N.nvmlSystemGetProcessName(p.pid), used))
        print("gpu %d: %s; used %d MiB" % (i, ", ".join(line) or "none",
                                          N.nvmlDeviceGetMemoryInfo(h).used // (1 << 20)))


N.nvmlInit()
mode = sys.argv[1]
if mode == "calls":
    calls()
elif mode == "sample":
    sample(int(sys.argv[2]))
elif mode == "procs":
    procs()
N.nvmlShutdown()
