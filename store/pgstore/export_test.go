package pgstore

// AcksWaiting returns how many Acks of queue wait for a flight, and how
// many fly.
func AcksWaiting(s *Store, queue string) (waiting, flying int) {
	s.acks.Lock()
	defer s.acks.Unlock()
	for g, q := range s.ackQueues {
		if g.queue == queue {
			waiting += len(q.waiting)
			flying += q.boarded
		}
	}
	return waiting, flying
}
