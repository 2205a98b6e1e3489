package watch

func openUevents(rcvbuf int) (ueventSource, error) {
	c, err := ListenUevents(rcvbuf)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func openLinks(rcvbuf int) (linkSource, error) {
	c, err := ListenLinks(rcvbuf)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func openEthtool(rcvbuf int) (ethtoolSource, error) {
	c, err := ListenEthtool(rcvbuf)
	if err != nil {
		return nil, err
	}
	return c, nil
}
