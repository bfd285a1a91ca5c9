class DDGSException(Exception):
    pass


class RatelimitException(DDGSException):
    pass


class TimeoutException(DDGSException):
    pass
