package ccalgo

// reuse returns env.Reuse if it is a non-nil *T, for a constructor to
// overwrite whole (every field assigned, so nothing of the former
// controller survives), else a new T. A connection that is recycled (the transport's
// Conn.Release) hands its former controller in, so that a simulation of
// many short transfers builds each one's controller without an allocation.
func reuse[T any, PT interface {
	*T
	Controller
}](env Env) PT {
	if r, ok := env.Reuse.(PT); ok && r != nil {
		return r
	}
	return new(T)
}
