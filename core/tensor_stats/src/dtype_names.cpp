// dtype names as Python prints them, so records diff against the Python side.
#include <ATen/core/Tensor.h>

#include <cctype>
#include <string>

#include "regiontrace/tensor_stats.hpp"

namespace regiontrace {

std::string dtype_name(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return "torch.float32";
    case at::kDouble:
      return "torch.float64";
    case at::kHalf:
      return "torch.float16";
    case at::kBFloat16:
      return "torch.bfloat16";
    case at::kByte:
      return "torch.uint8";
    case at::kChar:
      return "torch.int8";
    case at::kShort:
      return "torch.int16";
    case at::kInt:
      return "torch.int32";
    case at::kLong:
      return "torch.int64";
    case at::kBool:
      return "torch.bool";
    case at::kComplexHalf:
      return "torch.complex32";
    case at::kComplexFloat:
      return "torch.complex64";
    case at::kComplexDouble:
      return "torch.complex128";
    case at::kQInt8:
      return "torch.qint8";
    case at::kQUInt8:
      return "torch.quint8";
    case at::kQInt32:
      return "torch.qint32";
    case at::kQUInt4x2:
      return "torch.quint4x2";
    default:
      break;
  }
  // Newer dtypes (Float8_e4m3fn, UInt16, ...): Python's spelling is the
  // lower-case ScalarType name.
  std::string name = c10::toString(tensor.scalar_type());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return "torch." + name;
}

}  // namespace regiontrace
