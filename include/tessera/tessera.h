// Umbrella header: everything a C++ user of Tessera needs.
#pragma once

#include "tessera/array.h"
#include "tessera/device.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"
#include "tessera/index.h"
#include "tessera/io.h"
#include "tessera/jaxpr.h"
#include "tessera/transforms.h"
#include "tessera/checkpoint.h"
#include "tessera/control_flow.h"
#include "tessera/custom_derivatives.h"
#include "tessera/lax.h"
#include "tessera/numpy.h"
#include "tessera/primitive.h"
#include "tessera/shape.h"
#include "tessera/tree.h"
