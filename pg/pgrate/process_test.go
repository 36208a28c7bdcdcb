package pgrate_test

const childEnv = "PGRATE_TEST_CHILD"

func runChild() int { return 0 }
