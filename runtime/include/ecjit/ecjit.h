// ecjit: the public C++ API in one include (no LLVM types, no exceptions).
#pragma once

#include "ecjit/array_codec.h"
#include "ecjit/code_spec.h"
#include "ecjit/codec.h"
#include "ecjit/jit.h"
#include "ecjit/shard_set.h"
#include "ecjit/span.h"
#include "ecjit/status.h"
