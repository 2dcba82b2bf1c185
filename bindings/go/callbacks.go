package mcpclass

// The Go side of host callbacks: the C library calls these on its own threads (the caller's for
// a host classifier, the server's workers for tools). user_data points to a C-allocated slot
// holding a runtime/cgo.Handle of the Go function.

/*
#include <stdint.h>
#include <stdlib.h>
#include "mcpclass/mcpclass.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// liveCallbacks counts callback handles not yet released by the library (tests use it to prove
// that every destroy callback runs).
var liveCallbacks int64

// newCallbackSlot stores a handle to v in C memory; the pointer is the callback's user_data.
func newCallbackSlot(v any) unsafe.Pointer {
	slot := (*C.uintptr_t)(C.malloc(C.size_t(unsafe.Sizeof(C.uintptr_t(0)))))
	*slot = C.uintptr_t(cgo.NewHandle(v))
	atomic.AddInt64(&liveCallbacks, 1)
	return unsafe.Pointer(slot)
}

// releaseCallbackSlot deletes the handle and frees the slot; for the library's destroy callback,
// or for the caller when registration failed (then the library never owned it).
func releaseCallbackSlot(p unsafe.Pointer) {
	slot := (*C.uintptr_t)(p)
	cgo.Handle(*slot).Delete()
	C.free(p)
	atomic.AddInt64(&liveCallbacks, -1)
}

func callbackValue(p unsafe.Pointer) any { return cgo.Handle(*(*C.uintptr_t)(p)).Value() }

// writeCString copies msg (truncated) into the library's message buffer.
func writeCString(dst *C.char, size C.size_t, msg string) {
	if dst == nil || size == 0 {
		return
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(dst)), int(size))
	n := copy(buf[:len(buf)-1], msg)
	buf[n] = 0
}

//export mcpcgoClassify
func mcpcgoClassify(userData unsafe.Pointer, text *C.char, textLen C.size_t, probabilities *C.double,
	numCategories C.size_t, errorMessage *C.char, errorMessageSize C.size_t) C.int {
	fn := callbackValue(userData).(ClassifyFunc)
	p := unsafe.Slice((*float64)(unsafe.Pointer(probabilities)), int(numCategories))
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return fn(C.GoStringN(text, C.int(textLen)), p)
	}()
	if err != nil {
		writeCString(errorMessage, errorMessageSize, err.Error())
		return 1
	}
	return 0
}

//export mcpcgoTool
func mcpcgoTool(userData unsafe.Pointer, arguments *C.char, argumentsLen C.size_t, reply *C.mcpc_tool_reply) {
	tool := callbackValue(userData).(*registeredTool)
	args := json.RawMessage(C.GoBytes(unsafe.Pointer(arguments), C.int(argumentsLen)))
	result, err := func() (result ToolResult, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("tool %s panicked: %v", tool.name, r)
			}
		}()
		return tool.fn(args)
	}()
	if err == nil && result.Structured != nil {
		var data []byte
		if data, err = json.Marshal(result.Structured); err == nil {
			cjson := C.CString(string(data))
			defer C.free(unsafe.Pointer(cjson))
			if C.mcpc_tool_reply_structured(reply, cjson, C.size_t(len(data)), nil) == C.MCPC_OK {
				return
			}
			err = fmt.Errorf("tool %s: structured result is not a JSON object", tool.name)
		}
	}
	text, isError := result.Text, result.IsError
	if err != nil {
		text, isError = err.Error(), true
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	C.mcpc_tool_reply_text(reply, ctext, C.size_t(len(text)), C.bool(isError), nil)
}

//export mcpcgoDestroy
func mcpcgoDestroy(userData unsafe.Pointer) { releaseCallbackSlot(userData) }
