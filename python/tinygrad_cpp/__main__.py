"""python3 -m tinygrad_cpp: the version and the devices the plugins can serve."""
import tinygrad_cpp as tg

print(f"tinygrad_cpp {tg.__version__}")
print(f"default device: {tg.Device.DEFAULT}")
print("devices: " + ", ".join(tg.Device.devices()))
