// ReactorLog module
