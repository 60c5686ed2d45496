#!/usr/bin/python3
# Regenerates the .npy files test-print-npy reads (numpy 1.24, Debian 12):
#   cd tests/data/npy && /usr/bin/python3 generate.py
import numpy as np
from numpy.lib import format as fmt


def write(name, a, version=None):
    with open(name, 'wb') as f:
        fmt.write_array(f, a, version=version)


# numpy.save's own output (format 1.0, little-endian, C order): our saver
# must reproduce these byte for byte
np.save('f4_2x3.npy', np.array([[0.5, -1.25, 3], [1e-3, 100, -0.0]], '<f4'))
np.save('f8_scalar.npy', np.float64(0.1))
np.save('i8_1x2x1x2.npy', np.array([1, -2, 2**40, -2**62], '<i8').reshape(1, 2, 1, 2))
np.save('u1_1000.npy', (np.arange(1000) % 256).astype('|u1'))
np.save('b1_2x2.npy', np.array([[True, False], [False, True]]))
np.save('f4_0x3.npy', np.zeros((0, 3), '<f4'))
# other byte orders, versions and layouts
np.save('f8_be_3.npy', np.array([1.5, -2.0, 1e300], '>f8'))
np.save('i4_be_2x2.npy', np.array([[1, 2], [3, -4]], '>i4'))
write('i4_v2_2x2.npy', np.array([[1, -2], [2**31 - 1, -2**31]], '<i4'), (2, 0))
write('i8_v3_4.npy', np.array([0, -1, 2**62, -2**63], '<i8'), (3, 0))
np.save('f4_fortran_2x3x2.npy', np.asfortranarray(np.arange(12, dtype='<f4').reshape(2, 3, 2)))
# a dtype the engine does not have
np.save('c8.npy', np.array([1 + 2j], '<c8'))
# the narrower integers and float16 (numpy.save's output too)
np.save('f2_2x3.npy', np.array([[0.1, -65504, 6e-8], [np.inf, np.nan, 1 / 3]], '<f2'))
np.save('i1_4.npy', np.array([-128, -1, 0, 127], '|i1'))
np.save('i2_2x2.npy', np.array([[-32768, 300], [-1, 32767]], '<i2'))
np.save('u2_3.npy', np.array([0, 300, 65535], '<u2'))
np.save('u4_3.npy', np.array([0, 70000, 2**32 - 1], '<u4'))
np.save('u8_3.npy', np.array([0, 2**40, 2**64 - 1], '<u8'))
