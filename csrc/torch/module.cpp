// The Python module twinops._C: importing it runs the ops' TORCH_LIBRARY_FRAGMENT registrations.
// It names no op; WITH_CUDA says whether the CUDA kernels were compiled in (twinops._ext).
#include <Python.h>

extern "C" {
PyMODINIT_FUNC PyInit__C(void) {
  static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C", "twinops native ops (torch.ops.twinops)", -1,
                                          nullptr};
  PyObject* m = PyModule_Create(&module_def);
#ifdef TWINOPS_WITH_CUDA
  const long with_cuda = 1;
#else
  const long with_cuda = 0;
#endif
  if (m != nullptr && PyModule_AddIntConstant(m, "WITH_CUDA", with_cuda) != 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
}
