package tlog

// MemoryBound is memoryBound, for the benchmark that measures it.
var MemoryBound = memoryBound
