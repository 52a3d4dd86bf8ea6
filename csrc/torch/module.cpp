// The Python module twinops._C: importing it runs the TORCH_LIBRARY registrations.
#include <Python.h>

extern "C" {
PyMODINIT_FUNC PyInit__C(void) {
  static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C", "twinops native ops (torch.ops.twinops)", -1,
                                          nullptr};
  return PyModule_Create(&module_def);
}
}
