// Copyright 2007-2010 Baptiste Lepilleur and The JsonCpp Authors
// Distributed under MIT license, or public domain if desired and
// recognized in your jurisdiction.
// See file LICENSE for detail or copy at http://jsoncpp.sourceforge.net/LICENSE

#ifndef JSON_JSON_H_INCLUDED
#define JSON_JSON_H_INCLUDED

#include "config.h"
#include "json_features.h"
#include "reader.h"
#include "value.h"
#include "writer.h"

#endif // JSON_JSON_H_INCLUDED
